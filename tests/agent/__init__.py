"""Tests of the agent face: tools, parsers, the loop."""

"""Tests of judgebox.agent.tools: schemas, function tools, config loading, the trajectory owner, verl adapter."""

"""judgebox reward: test specifications, honest verdicts, verl/TRL scoring functions and pass@k."""

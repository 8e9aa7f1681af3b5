"""Schedule: signals and scores of pending runs, the cycle's rules (one gate), and the cycle itself."""

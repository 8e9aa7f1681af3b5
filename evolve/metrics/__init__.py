"""Metrics: what evolve records of skill use (impressions, invocations), the rates, the report."""

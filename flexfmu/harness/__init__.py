"""Harness: reference simulations, labelled results and reports."""

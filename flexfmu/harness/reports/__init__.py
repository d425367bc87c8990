"""Reports: what runs say, as tables, figures and files: pairwise comparisons with their tolerances, the
validity envelope, tracking, vibration and effort, plots, report.md and report.json."""

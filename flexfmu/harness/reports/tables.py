"""Tables of rows as CSV files: what a sweep, a campaign of tuning starts or any family of points writes."""

from __future__ import annotations

import csv
from pathlib import Path


def write_table(rows: list[dict], path: Path) -> None:
    """Write ``rows`` as the CSV table ``path``, one row per point, columns in order of first appearance;
    floats exact."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([repr(v) if isinstance(v, float) else v for v in (row.get(c, "") for c in columns)])

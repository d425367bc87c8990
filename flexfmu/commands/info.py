"""``flexfmu info ARM.toml [--json]``: what a Model of the arm holds."""

from __future__ import annotations

import json


def add_parser(sub) -> None:
    parser = sub.add_parser("info", help="print coordinates, parameters, inputs and outputs of an arm")
    parser.add_argument("arm", help="arm specification (TOML)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(run=run)


def describe(model) -> dict:
    """Plain-data description of a Model (what ``info --json`` prints)."""
    return {
        "name": model.arm.name,
        "description": model.arm.description,
        "coordinates": model.coordinates,
        "parameters": [
            {"name": r.name, "value": r.value, "unit": r.unit, "description": r.description}
            for r in model.parameter_table
        ],
        "inputs": [{"name": name, "unit": "N.m"} for name in model.inputs],
        "outputs": [{"name": n, "unit": u} for n, u in zip(model.output_names, model.output_units)],
    }


def run(args) -> int:
    from flexfmu import build_model, load_arm

    data = describe(build_model(load_arm(args.arm)))
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"{data['name']}: {data['description']}")
    print(f"\ncoordinates ({len(data['coordinates'])}): {', '.join(data['coordinates'])}")
    print(f"\nparameters ({len(data['parameters'])}):")
    width = max(len(r["name"]) for r in data["parameters"])
    for row in data["parameters"]:
        print(f"  {row['name']:<{width}}  {row['value']:<12.6g} {row['unit']:<10} {row['description']}")
    print(f"\ninputs: {', '.join(r['name'] + ' [' + r['unit'] + ']' for r in data['inputs'])}")
    print(f"\noutputs ({len(data['outputs'])}):")
    for row in data["outputs"]:
        print(f"  {row['name']} [{row['unit']}]")
    return 0

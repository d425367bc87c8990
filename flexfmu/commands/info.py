"""``flexfmu info [ARM] [--json]``: what a Model of the arm holds.

Without an arm, lists the example arms and scenarios that ship with flexfmu.
"""

from __future__ import annotations

import json

from flexfmu.commands._common import add_arm


def add_parser(sub) -> None:
    parser = sub.add_parser("info", help="print coordinates, parameters, inputs and outputs of an arm "
                                         "(without an arm: the examples)")
    add_arm(parser, optional=True)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(run=run)


def describe(model) -> dict:
    """Plain-data description of a Model (what ``info --json`` prints)."""
    return {
        "name": model.arm.name,
        "kind": model.arm.kind,
        "description": model.arm.description,
        "coordinates": model.coordinates,
        "states": model.states,
        "layout": [{"name": c.name, "kind": c.kind, "link": c.link, "unit": c.unit, "prescribed": c.prescribed}
                   for c in model.layout],
        "quasi_static": [{"name": c.name, "kind": c.kind, "link": c.link, "unit": c.unit}
                         for c in model.quasi_static],
        "parameters": [
            {"name": r.name, "value": r.value, "unit": r.unit, "description": r.description, "tunable": r.tunable}
            for r in model.parameter_table
        ],
        "inputs": [{"name": s.name, "unit": s.unit, "group": s.group, "description": s.description}
                   for s in model.input_table],
        "outputs": [{"name": s.name, "unit": s.unit, "group": s.group} for s in model.output_table],
        **({"reduction": reduction_data(model.reduction)} if model.reduction else {}),
    }


def reduction_data(summary) -> dict:
    """Plain data of a Model's ReductionSummary: per body its interface values and its kept and dropped
    fixed-interface modes (field, rad/s)."""
    def modes(body, kept):
        return [{"field": field, "rad/s": frequency} for field, frequency, keep in body.modes if keep == kept]

    return {"method": summary.method, "description": summary.description,
            "bodies": [{"body": body.body, "interface": body.interface, "kept": modes(body, True),
                        "dropped": modes(body, False)} for body in summary.bodies]}


def reduction_lines(data: dict) -> list[str]:
    """``info``'s text for the reduction ``data`` of :func:`reduction_data`."""
    lines = [f"\nreduction: {data['description']}"]
    for body in data["bodies"]:
        def listed(modes):
            shown = ", ".join(f"{m['field']} {m['rad/s']:.0f}" for m in modes[:6])
            return f"{len(modes)} ({shown}{', ...' if len(modes) > 6 else ''} rad/s)" if modes else "0"
        if not body["kept"] and not body["dropped"]:
            lines.append(f"  {body['body']}: {body['interface']} interface values; no inner nodal values to reduce")
        else:
            lines.append(f"  {body['body']}: {body['interface']} interface values; fixed-interface modes kept "
                         f"{listed(body['kept'])}, dropped {listed(body['dropped'])}")
    return lines


def examples() -> dict:
    """The shipped example arms (with their descriptions) and scenarios."""
    from flexfmu import load_arm
    from flexfmu.control.scenario import load_scenario
    from flexfmu.data import arm_names, scenario_names

    return {"arms": {name: load_arm(name).description for name in arm_names()},
            "scenarios": {name: f"{s.arm}: {s.description}"
                          for name in scenario_names() for s in [load_scenario(name)]}}


def run(args) -> int:
    if args.arm is None:
        data = examples()
        if args.json:
            print(json.dumps(data, indent=2))
            return 0
        for title, rows in (("example arms", data["arms"]), ("scenarios", data["scenarios"])):
            print(f"{title} (use the name in place of a file):")
            width = max(map(len, rows))
            for name, text in rows.items():
                print(f"  {name:<{width}}  {text}")
        return 0
    from flexfmu import build_model, load_arm
    from flexfmu.kinds import kind_of

    arm = load_arm(args.arm)
    model = build_model(arm)
    data = describe(model)
    frequencies = kind_of(arm).home_frequencies
    found = frequencies(model) if frequencies is not None else None
    if found:
        data["frequencies"] = found
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"{data['name']}: {data['description']}")
    print(f"\ncoordinates ({len(data['coordinates'])}): {', '.join(data['coordinates'])}")
    prescribed = [c["name"] for c in data["layout"] if c["prescribed"]]
    if prescribed:
        print(f"prescribed (inputs, not states): {', '.join(prescribed)}")
    if data["quasi_static"]:
        print(f"quasi-static (at their static equilibrium, not states): "
              f"{', '.join(c['name'] for c in data['quasi_static'])}")
    print(f"\nparameters ({len(data['parameters'])}; * fixed while running):")
    width = max(len(r["name"]) for r in data["parameters"])
    for row in data["parameters"]:
        mark = " " if row["tunable"] else "*"
        print(f"  {row['name']:<{width}}{mark} {row['value']:<12.6g} {row['unit']:<10} {row['description']}")
    print(f"\ninputs: {', '.join(r['name'] + ' [' + r['unit'] + ']' for r in data['inputs'])}")
    print(f"\noutputs ({len(data['outputs'])}):")
    for row in data["outputs"]:
        print(f"  {row['name']} [{row['unit']}]")
    if "reduction" in data:
        print("\n".join(reduction_lines(data["reduction"])))
    if "frequencies" in data:
        rows = data["frequencies"]
        print(f"\nnatural frequencies {rows['where']} (rad/s): " + " ".join(f"{w:.4f}" for w in rows["rad/s"]))
        if "full rad/s" in rows:
            print("natural frequencies of the full model, the same way (rad/s): "
                  + " ".join(f"{w:.4f}" for w in rows["full rad/s"]))
    return 0

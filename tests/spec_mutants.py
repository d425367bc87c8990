"""A seeded mutator of arm specifications, for the fuzz test of the spec and the Model.

Each mutant is an example arm (parsed TOML) with one to three random edits of
the kinds a user (or a broken script) makes: a number replaced by an extreme,
a negative, a non-finite or a wrongly typed value, or scaled by up to twelve
orders of magnitude; a key deleted or misplaced; a kind, family or count
changed; a joint made prescribed or a link's geometric stiffening switched
(or given a non-boolean); user shapes from a pool of good, singular, overflowing and
dependent expressions; links or lumped masses multiplied beyond the size
limits. Or, for the file path of ``load_arm``, the TOML text itself with
bytes flipped. The same seed gives the same mutants.
"""

from __future__ import annotations

import copy
import math
import tomllib

import numpy as np

from flexfmu.data import arm_names, resolve_arm

EXTREMES = (0, 0.0, -0.0, -1, -1e-3, 1e-300, -1e-300, 1e300, -1e300, 1e-12, 1e12, 1e-6, 1e6, 1e20, 10**400,
            math.nan, math.inf, -math.inf, True, False, "1.0", "", None, [], [1.0], {}, 3, 0.5, 1.0, 2.0)
SHAPES = ("xi^2", "xi^3 - xi^2", "xi**2*exp(1000*xi)", "sin(pi*xi)", "xi*(1 - xi)", "2*xi^2", "1/(xi - 0.5)",
          "xi^2/(xi - 0.3)", "exp(xi^2) - 1", "xi^1.5", "tan(pi*xi/2)", "log(1 + xi^2)", "xi^2*exp(20*xi)",
          "sin(2*pi*xi)", "xi^2 - xi^3", "1 - cos(pi*xi/2)", "xi^2 + y", "xi - xi", "sqrt(xi)*xi^2",
          "xi^4*1e8", "cosh(xi) - 1", "xi^3*(1-xi)")
KEYS = ("EI", "E", "I", "mass", "mass_per_length", "com", "inertia", "stiffness", "shapes", "frame",
        "tip_mass", "count", "bogus", "lenght", "modes", "joint", "kind", "rotor_inertia", "gear_ratio",
        "prescribed", "geometric_stiffening")
FAMILIES = ("pinned-pinned", "clamped-free", "clamped-mass", "user", "free-free", 3)


def example_arms() -> dict[str, tuple[bytes, dict]]:
    """{name: (TOML bytes, parsed dict)} of every example arm."""
    arms = {}
    for name in arm_names():
        raw = resolve_arm(name).read_bytes()
        arms[name] = (raw, tomllib.loads(raw.decode()))
    return arms


def leaves(node, path=()):
    """Paths (tuples of keys and indices) of every number, string, boolean and list of numbers in ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list) and node and all(isinstance(item, dict) for item in node):
        for index, item in enumerate(node):
            yield from leaves(item, (*path, index))
    else:
        yield path


def tables(node, path=()):
    """Paths of every table (dict) in ``node``, the top level included."""
    if isinstance(node, dict):
        yield path
        for key, value in node.items():
            yield from tables(value, (*path, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            if isinstance(item, dict):
                yield from tables(item, (*path, index))


def at(node, path):
    """The item of ``node`` at ``path``."""
    for key in path:
        node = node[key]
    return node


def pick(rng, items):
    """One of ``items``, chosen by ``rng``."""
    return items[int(rng.integers(len(items)))]


def set_number(rng, data):
    """Replace a leaf by an extreme or wrongly typed value, or scale a number by 10^(-12..12)."""
    path = pick(rng, list(leaves(data)))
    parent, key = at(data, path[:-1]), path[-1]
    value = parent[key]
    scalable = isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 1e300
    if scalable and rng.random() < 0.5:
        parent[key] = float(value) * 10.0 ** rng.uniform(-12, 12) * (-1 if rng.random() < 0.1 else 1)
    else:
        replacement = pick(rng, EXTREMES)
        if replacement is None:
            del parent[key]
        else:
            parent[key] = copy.deepcopy(replacement)


def delete_key(rng, data):
    """Delete a random key of a random table."""
    table = at(data, pick(rng, list(tables(data))))
    if table:
        del table[pick(rng, list(table))]


def add_key(rng, data):
    """Add a key that belongs elsewhere, or nowhere, to a random table."""
    table = at(data, pick(rng, list(tables(data))))
    table[pick(rng, KEYS)] = copy.deepcopy(pick(rng, (1.0, 0.5, "x", [0.1, 0.0], {"kind": "rigid"}, 2)))


def change_kind(rng, data):
    """Change a link's kind, a joint's kind or a mode family (adding what a flexible joint needs, sometimes)."""
    links = data.get("link")
    if not isinstance(links, list) or not links or not isinstance(links[0], dict):
        return
    link = pick(rng, links)
    if not isinstance(link, dict):
        return
    choice = rng.integers(3)
    if choice == 0:
        link["kind"] = pick(rng, ("rigid", "flexible", "elastic"))
    elif choice == 1:
        joint = link.setdefault("joint", {})
        if isinstance(joint, dict):
            joint["kind"] = pick(rng, ("rigid", "flexible"))
            if joint["kind"] == "flexible" and rng.random() < 0.7:
                joint.update(stiffness=float(10.0 ** rng.uniform(-4, 10)),
                             rotor_inertia=float(10.0 ** rng.uniform(-13, 4)))
    elif isinstance(link.get("modes"), dict):
        link["modes"]["family"] = pick(rng, FAMILIES)


def switch_flag(rng, data):
    """Make a joint prescribed (or not), or switch a link's geometric stiffening, to a boolean mostly, else
    to a wrongly typed value."""
    links = [link for link in data.get("link", []) if isinstance(link, dict)]
    if not links:
        return
    link = pick(rng, links)
    value = bool(rng.random() < 0.7) if rng.random() < 0.9 else pick(rng, (1, "true", 0.0, None, []))
    if rng.random() < 0.5:
        joint = link.setdefault("joint", {})
        if isinstance(joint, dict):
            joint["prescribed"] = value
    else:
        link["geometric_stiffening"] = value


def user_shapes(rng, data):
    """Turn a flexible link's modes into user shapes drawn from :data:`SHAPES`."""
    links = [link for link in data.get("link", []) if isinstance(link, dict) and isinstance(link.get("modes"), dict)]
    if not links:
        return
    modes = pick(rng, links)["modes"]
    count = int(rng.integers(1, 4))
    modes.update(family="user", frame=pick(rng, ("tangent", "chord")),
                 shapes=[pick(rng, SHAPES) for _ in range(count)])
    modes.pop("count", None) if rng.random() < 0.7 else modes.update(count=count)
    for key in ("damping_ratio", "damping_coefficient"):
        if isinstance(modes.get(key), list):
            modes[key] = modes[key][0] if modes[key] else 0.0


def change_count(rng, data):
    """Set a mode count to anything from -2 to 30, or a float."""
    links = [link for link in data.get("link", []) if isinstance(link, dict) and isinstance(link.get("modes"), dict)]
    if links:
        modes = pick(rng, links)["modes"]
        modes["count"] = pick(rng, (int(rng.integers(-2, 31)), 2.0, 20, 21))
        modes.pop("damping_ratio", None) if rng.random() < 0.5 else None


def multiply(rng, data):
    """Repeat the links or lumped masses, up to past the size limits."""
    key = pick(rng, ("link", "lumped_mass"))
    items = data.get(key)
    if isinstance(items, list) and items:
        data[key] = [copy.deepcopy(pick(rng, items)) for _ in range(int(rng.integers(1, 130 if key == "lumped_mass"
                                                                                          else 26)))]


MUTATIONS = (set_number, set_number, set_number, set_number, delete_key, add_key, change_kind, switch_flag,
             user_shapes, change_count, multiply)


def flipped(rng, raw: bytes) -> bytes:
    """``raw`` with one to three random bytes set to random values."""
    text = bytearray(raw)
    for _ in range(int(rng.integers(1, 4))):
        text[int(rng.integers(len(text)))] = int(rng.integers(256))
    return bytes(text)


def mutant(rng, arms: dict) -> tuple[str, dict | bytes]:
    """One mutant: ("dict", data) for arm_from_dict, or ("toml", bytes) for load_arm (one in ten)."""
    raw, data = arms[pick(rng, sorted(arms))]
    if rng.random() < 0.1:
        return "toml", flipped(rng, raw)
    data = copy.deepcopy(data)
    for _ in range(int(rng.integers(1, 4))):
        pick(rng, MUTATIONS)(rng, data)
    return "dict", data


def mutants(seed: int, count: int, arms: dict | None = None):
    """``count`` mutants of the example arms from the seed ``seed``."""
    rng = np.random.default_rng(seed)
    arms = arms or example_arms()
    for _ in range(count):
        yield mutant(rng, arms)

"""The platforms a native FMU carries binaries for, and the compilers that build them.

A native FMU ships one shared library per platform: ``linux64`` built with
this machine's C compiler, ``win64`` cross-compiled with MinGW-w64
(``x86_64-w64-mingw32-gcc``, runtime linked statically so the DLL needs
nothing beside it; Debian: ``apt-get install gcc-mingw-w64-x86-64``). FMI 2
names the binaries folder after the platform (``binaries/win64``), FMI 3
after the platform tuple (``binaries/x86_64-windows``). By default an export
builds every platform whose compiler is present and says which it skipped
and why (:func:`choose_platforms`).
"""

from __future__ import annotations

import os
import platform as _machine
import shutil
import sys
from dataclasses import dataclass

from flexfmu.errors import ExportError


@dataclass(frozen=True)
class Platform:
    """One binary platform.

    Attributes
    ----------
    name : str
        What ``--platforms`` takes; also the FMI 2 binaries folder.
    fmi3_folder : str
        The FMI 3 binaries folder (platform tuple).
    extension : str
        Of the shared library.
    compile_flags : tuple of str
        Beside the common flags of :mod:`flexfmu.targets.build`.
    link_flags : tuple of str
        For linking the shared library (before the objects).
    libraries : tuple of str
        After the objects.
    install_hint : str
        How to get its compiler, for the message when it is missing.
    """

    name: str
    fmi3_folder: str
    extension: str
    compile_flags: tuple[str, ...]
    link_flags: tuple[str, ...]
    libraries: tuple[str, ...]
    install_hint: str

    def folder(self, fmi_version: str) -> str:
        """The binaries folder of this platform for FMI ``fmi_version`` ("2" or "3")."""
        return self.name if fmi_version == "2" else self.fmi3_folder

    def compilers(self) -> tuple[str, ...]:
        """Candidate compiler commands, best first: the host's (``$CC``, ``cc``, ``gcc``) for the host's
        platform, MinGW-w64's for win64 elsewhere."""
        native = tuple(filter(None, (os.environ.get("CC"), "cc", "gcc")))
        if self.name == host_platform():
            return native + (("x86_64-w64-mingw32-gcc",) if self.name == "win64" else ())
        return ("x86_64-w64-mingw32-gcc",) if self.name == "win64" else ()

    def compiler(self) -> str | None:
        """The first of :meth:`compilers` found (a path or a name on the PATH), None if none is."""
        for candidate in self.compilers():
            if os.path.isabs(candidate) or shutil.which(candidate):
                return candidate
        return None


_UNIX_LINK = ("-shared", "-static-libgcc")
PLATFORMS: dict[str, Platform] = {p.name: p for p in (
    Platform("linux64", "x86_64-linux", ".so", ("-fPIC",), _UNIX_LINK, ("-lm",),
             "built with the C compiler of a Linux machine (install gcc)"),
    Platform("win64", "x86_64-windows", ".dll", (), ("-shared", "-static", "-s"), (),
             "install MinGW-w64 (Debian/Ubuntu: apt-get install gcc-mingw-w64-x86-64)"),
    Platform("darwin64", ("aarch64" if _machine.machine() == "arm64" else "x86_64") + "-darwin", ".dylib",
             ("-fPIC",), ("-shared",), ("-lm",), "built with the C compiler of a Mac"),
)}


def host_platform() -> str:
    """The platform name of this machine."""
    if sys.platform.startswith("win"):
        return "win64"
    return "darwin64" if sys.platform == "darwin" else "linux64"


def parse_platforms(text: str) -> tuple[str, ...]:
    """The platform names in ``text`` (``"linux64,win64"`` -> ("linux64", "win64")); an ExportError names an
    unknown or repeated entry."""
    names = tuple(part.strip() for part in text.split(","))
    unknown = [name for name in names if name not in PLATFORMS]
    if unknown or not names or len(set(names)) != len(names):
        raise ExportError(f"platforms must be distinct names out of {', '.join(PLATFORMS)} separated by commas, "
                          f"got {text!r}")
    return names


def choose_platforms(requested: tuple[str, ...] | None) -> tuple[list[tuple[Platform, str]], dict[str, str]]:
    """The platforms to build with their compilers, and the ones skipped with why.

    Parameters
    ----------
    requested : tuple of str or None
        Platform names; None means every platform whose compiler is present.

    Returns
    -------
    chosen : list of (Platform, str)
        Platform and compiler command.
    skipped : dict
        Platform name -> reason (only when ``requested`` is None).

    Raises
    ------
    ExportError
        A requested platform without a compiler, or no platform at all.
    """
    chosen, skipped = [], {}
    for name in requested or PLATFORMS:
        platform = PLATFORMS[name]
        compiler = platform.compiler()
        if compiler:
            chosen.append((platform, compiler))
        else:
            tried = ", ".join(platform.compilers()) or "none for this machine"
            skipped[name] = f"no compiler found (tried: {tried}); {platform.install_hint}"
    if requested and skipped:
        raise ExportError("; ".join(f"platform {name}: {why}" for name, why in skipped.items()))
    if not chosen:
        raise ExportError("no platform can be built: " + "; ".join(f"{n}: {w}" for n, w in skipped.items()))
    if requested is None:  # the host's other platforms are not worth a note
        skipped = {name: why for name, why in skipped.items() if PLATFORMS[name].compilers()}
    return chosen, skipped

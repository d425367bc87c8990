"""What a shared library exports, and for which machine it was built.

Validation reads the binaries of every platform an FMU carries, on any host:
ELF libraries (linux64) through binutils' ``nm``, Windows DLLs (win64) by
reading the PE export table here, so checking a DLL needs no Windows tool.
The PE layout is Microsoft's "PE Format" specification: the DOS header points
at the PE signature, the COFF header and the optional header, whose first data
directory locates the export directory; its name pointer table lists the
exported names.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}
ELF_X86_64, PE_AMD64 = 62, 0x8664


class BinaryFormatError(ValueError):
    """The file is not a library of the expected format."""


def _unpack(fmt: str, data: bytes, offset: int) -> tuple:
    try:
        return struct.unpack_from(fmt, data, offset)
    except struct.error:
        raise BinaryFormatError(f"truncated at byte {offset}") from None


def pe_machine_and_exports(data: bytes) -> tuple[int, set[str]]:
    """(COFF machine type, exported names) of the PE file (DLL) whose bytes are ``data``; raises
    BinaryFormatError if it is not one."""
    if data[:2] != b"MZ":
        raise BinaryFormatError("no DOS header (MZ)")
    (pe,) = _unpack("<I", data, 0x3C)
    if data[pe:pe + 4] != b"PE\0\0":
        raise BinaryFormatError("no PE signature")
    machine, n_sections, _, _, _, optional_size, _ = _unpack("<HHIIIHH", data, pe + 4)
    optional = pe + 24
    (magic,) = _unpack("<H", data, optional)
    if magic not in (0x10B, 0x20B):
        raise BinaryFormatError(f"unknown optional header magic {magic:#x}")
    directories = optional + (112 if magic == 0x20B else 96)
    (n_directories,) = _unpack("<I", data, directories - 4)
    if n_directories < 1:
        return machine, set()
    export_rva, _ = _unpack("<II", data, directories)
    if export_rva == 0:
        return machine, set()
    sections = [_unpack("<IIII", data, optional + optional_size + 40 * k + 8) for k in range(n_sections)]

    def offset(rva: int) -> int:
        for virtual_size, address, raw_size, raw_pointer in sections:
            if address <= rva < address + max(virtual_size, raw_size):
                return rva - address + raw_pointer
        raise BinaryFormatError(f"address {rva:#x} is in no section")

    fields = _unpack("<IIHHIIIIIII", data, offset(export_rva))
    n_names, names_rva = fields[7], fields[9]
    names = set()
    for k in range(n_names):
        (name_rva,) = _unpack("<I", data, offset(names_rva) + 4 * k)
        start = offset(name_rva)
        names.add(data[start:data.index(b"\0", start)].decode("ascii", "replace"))
    return machine, names


def elf_machine(data: bytes) -> int:
    """The e_machine field of the ELF file whose bytes are ``data``; raises BinaryFormatError if it is
    not a little-endian 64-bit ELF file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise BinaryFormatError("not a little-endian 64-bit ELF file")
    return _unpack("<H", data, 18)[0]


def elf_exports(path: Path) -> set[str] | None:
    """The defined dynamic symbols of the ELF library ``path`` (binutils ``nm -D``), without the
    linker's own; None if nm is not installed. Raises BinaryFormatError if nm cannot read it."""
    if not shutil.which("nm"):
        return None
    done = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        raise BinaryFormatError(f"nm cannot read it: {done.stderr.strip()}")
    return {line.split()[-1] for line in done.stdout.splitlines() if line.strip()} - LINKER_SYMBOLS

"""The patchable sites of an ELF file, read from its section headers as fnprof's runtime reads
them (docs/patchable.md): gcc builds' fnprof_sites (8-byte entries: int32 site - &entry,
uint8 kind 1 entry / 2 exit, uint8 size, uint16 0) and clang builds' xray_instr_map (32-byte
entries, version 2: int64 sled - &entry, int64 function - &entry.function, uint8 kind
0 entry / 1 exit / 2 tail, uint8 always, uint8 version). python3 standard library only.
"""

import struct

SHT_SYMTAB, SHT_DYNAMIC, SHT_NOBITS = 2, 6, 8
SHF_ALLOC = 2
DT_TEXTREL, DT_FLAGS, DF_TEXTREL = 22, 30, 4
STT_FUNC = 2

ENTRY, EXIT, TAIL = "entry", "exit", "tail"
GCC_NOP5 = bytes([0x0F, 0x1F, 0x44, 0x00, 0x00])
ENDBR64 = bytes([0xF3, 0x0F, 0x1E, 0xFA])


class ElfError(Exception):
    pass


class Section:
    def __init__(self, name, stype, flags, addr, offset, size, link, entsize):
        self.name, self.type, self.flags = name, stype, flags
        self.addr, self.offset, self.size = addr, offset, size
        self.link, self.entsize = link, entsize


class Site:
    """One site: address, kind (ENTRY, EXIT, TAIL), size, and the function it names (xray),
    the raw fields for the checks of the format."""

    def __init__(self, addr, kind, size, function=None, raw=None):
        self.addr, self.kind, self.size, self.function, self.raw = addr, kind, size, function, raw


class Elf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise ElfError("%s: not a little-endian ELF64 file" % path)
        (self.type, self.machine, _, _, _, shoff, _, _, _, _, shentsize, shnum,
         shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", d, 16)
        if shentsize != 64 or shoff == 0:
            raise ElfError("%s: no section headers" % path)
        raw = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * 64) for i in range(shnum)]
        strtab = raw[shstrndx]
        self.sections = []
        for (name, stype, flags, addr, offset, size, link, _, _, entsize) in raw:
            end = d.index(b"\0", strtab[4] + name)
            self.sections.append(Section(d[strtab[4] + name:end].decode(), stype, flags, addr,
                                         offset, size, link, entsize))

    def named(self, name):
        return [s for s in self.sections if s.name == name]

    def bytes_at(self, addr, n):
        """n bytes of the loaded image at addr (a virtual address), from the file."""
        for s in self.sections:
            if (s.flags & SHF_ALLOC and s.type != SHT_NOBITS and s.addr <= addr
                    and addr + n <= s.addr + s.size):
                off = s.offset + addr - s.addr
                return self.data[off:off + n]
        raise ElfError("address %#x is in no section of the file" % addr)

    def functions(self):
        """[(name, start, size)] of the STT_FUNC symbols of .symtab (defined ones)."""
        out = []
        for s in self.sections:
            if s.type != SHT_SYMTAB:
                continue
            strs = self.sections[s.link]
            for i in range(s.size // 24):
                name, info, _, shndx, value, size = struct.unpack_from(
                    "<IBBHQQ", self.data, s.offset + i * 24)
                if info & 0xF != STT_FUNC or shndx == 0:
                    continue
                start = strs.offset + name
                end = self.data.index(b"\0", start)
                out.append((self.data[start:end].decode(), value, size))
        return out

    def symbol_names(self):
        """Every symbol name of .symtab and .dynsym, defined or not."""
        names = set()
        for s in self.sections:
            if s.type not in (SHT_SYMTAB, 11):
                continue
            strs = self.sections[s.link]
            for i in range(s.size // 24):
                name = struct.unpack_from("<I", self.data, s.offset + i * 24)[0]
                start = strs.offset + name
                names.add(self.data[start:self.data.index(b"\0", start)].decode())
        return names

    def textrel(self):
        """Whether the dynamic section asks for text relocations (DT_TEXTREL, DF_TEXTREL)."""
        for s in self.sections:
            if s.type != SHT_DYNAMIC:
                continue
            for i in range(s.size // 16):
                tag, val = struct.unpack_from("<qQ", self.data, s.offset + i * 16)
                if tag == DT_TEXTREL or (tag == DT_FLAGS and val & DF_TEXTREL):
                    return True
        return False

    def gcc_sites(self):
        sites = []
        for s in self.named("fnprof_sites"):
            if s.size % 8:
                raise ElfError("fnprof_sites: size %d is no multiple of 8" % s.size)
            for i in range(s.size // 8):
                at = s.addr + i * 8
                rel, kind, size, zero = struct.unpack_from("<iBBH", self.data, s.offset + i * 8)
                sites.append(Site(at + rel, {1: ENTRY, 2: EXIT}.get(kind, kind), size,
                                  raw=(kind, size, zero)))
        return sites

    def xray_sites(self):
        sites = []
        for s in self.named("xray_instr_map"):
            if s.size % 32:
                raise ElfError("xray_instr_map: size %d is no multiple of 32" % s.size)
            for i in range(s.size // 32):
                at = s.addr + i * 32
                sled, fn, kind, always, version = struct.unpack_from(
                    "<qqBBB", self.data, s.offset + i * 32)
                if version >= 2:
                    sled += at
                    fn += at + 8
                kind = {0: ENTRY, 1: EXIT, 2: TAIL}.get(kind)
                if kind:
                    sites.append(Site(sled & (2**64 - 1), kind, 11, fn & (2**64 - 1),
                                      raw=(kind, always, version)))
        return sites
# SPDX-License-Identifier: MIT

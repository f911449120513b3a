#!/usr/bin/env python3
"""Checks a screenshot of the Sojourn scheduler page: a PNG whose decoded
pixels hold the three bar colours (orange used, blue share outline, grey
maximum). Standard library only (zlib): no PIL on a fresh machine.
Usage: ui-check-png.py FILE.png"""
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat, w = 8, b'', 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
        assert depth == 8 and ctype in (2, 6), (depth, ctype)
        bpp = 3 if ctype == 2 else 4
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
seen = set()
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        r, g, bl = line[x], line[x + 1], line[x + 2]
        if r > 230 and 130 < g < 190 and bl < 80: seen.add('orange')
        if r < 110 and 110 < g < 150 and bl > 190: seen.add('blue')
        if r == g == bl == 200: seen.add('grey')
    prev = line
missing = {'orange', 'blue', 'grey'} - seen
print(f'{sys.argv[1]}: {w}x{h}, bar colours found: {sorted(seen)}')
sys.exit(f'missing bar colours: {sorted(missing)}' if missing else 0)

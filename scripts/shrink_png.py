# Re-encodes a PNG screenshot as an indexed-colour PNG (pure Python, zlib only), so that
# docs/observe/dashboard.png stays small: python3 scripts/shrink_png.py IN.png OUT.png [LEVELS]
# (LEVELS per colour channel, default 6; the committed screenshot used 7). Taken with
# ODEON_REQUIRE_BROWSER=1 ODEON_DASHBOARD_SCREENSHOT=IN.png cargo test -p odeon-remote
# --features observe --test dashboard the_page.
import sys, zlib, struct
def chunks(b):
    i = 8
    while i < len(b):
        n = struct.unpack(">I", b[i:i+4])[0]; t = b[i+4:i+8]; d = b[i+8:i+8+n]
        yield t, d; i += 12 + n
src = open(sys.argv[1], "rb").read()
idat = b""; 
for t, d in chunks(src):
    if t == b"IHDR": w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", d)
    elif t == b"IDAT": idat += d
assert depth == 8 and inter == 0 and ctype in (2, 6), (depth, ctype, inter)
bpp = 4 if ctype == 6 else 3
raw = zlib.decompress(idat); stride = w * bpp
prev = bytearray(stride); rows = []; p = 0
for y in range(h):
    f = raw[p]; line = bytearray(raw[p+1:p+1+stride]); p += 1 + stride
    if f == 1:
        for i in range(bpp, stride): line[i] = (line[i] + line[i-bpp]) & 255
    elif f == 2:
        for i in range(stride): line[i] = (line[i] + prev[i]) & 255
    elif f == 3:
        for i in range(stride): line[i] = (line[i] + ((line[i-bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
    elif f == 4:
        for i in range(stride):
            a = line[i-bpp] if i >= bpp else 0; b = prev[i]; c = prev[i-bpp] if i >= bpp else 0
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2*c)
            pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[i] = (line[i] + pr) & 255
    rows.append(line); prev = line
levels = int(sys.argv[3]) if len(sys.argv) > 3 else 6
q = lambda v: min(255, round(round(v * (levels - 1) / 255) * 255 / (levels - 1)))
palette = {}; out = bytearray()
for line in rows:
    out.append(0)
    for x in range(w):
        r, g, b = line[x*bpp:x*bpp+3]
        key = (q(r), q(g), q(b))
        idx = palette.get(key)
        if idx is None:
            idx = palette[key] = len(palette)
        out.append(idx)
assert len(palette) <= 256, len(palette)
pal = b"".join(bytes(k) for k in sorted(palette, key=palette.get))
def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0)) + chunk(b"PLTE", pal) + chunk(b"IDAT", zlib.compress(bytes(out), 9)) + chunk(b"IEND", b"")
open(sys.argv[2], "wb").write(png); print(len(palette), "colours,", len(png), "bytes")

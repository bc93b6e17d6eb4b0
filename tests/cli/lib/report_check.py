# report_check.py: checks of `cachet report`'s output for tests/cli/report.sh (run by /usr/bin/python3,
# standard library only). Subcommands print "ok" or the problems found, one line.
#   html FILE SERIES...    well-formed XML, self-contained, unique ids, every SVG parses, series present
#   json FILE              the JSON's members and that per-ref rows add up to the levels
#   split FILE OUTDIR      one small page per figure (OUTDIR/plot-ID.html), for the browser test
#   pixels PNG X0 Y0 X1 Y1 MIN_INK MIN_COLOR   the region has ink (non-white) and coloured pixels
import json, re, struct, sys, zlib
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
XHTML = "{http://www.w3.org/1999/xhtml}"


def check_html(path, series):
    text = open(path, encoding="utf-8").read()
    errs = []
    try:
        root = ET.fromstring(text.replace("<!DOCTYPE html>", "", 1))
    except ET.ParseError as e:
        return "not well formed: %s" % e
    low = text.lower()
    for bad in ("<script", "<link", "@import", "url(http", "src=\"http", "<iframe", "<img"):
        if bad in low:
            errs.append("has " + bad)
    for m in re.finditer(r'(?:href|src)\s*=\s*["\']([^"\']*)', text):
        if not m.group(1).startswith("#"):
            errs.append("external reference " + m.group(1)[:60])
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    dup = sorted(set(i for i in ids if ids.count(i) > 1))
    if dup:
        errs.append("duplicate ids " + ",".join(dup[:5]))
    svgs = list(root.iter(SVG + "svg"))
    for s in svgs:
        try:
            ET.fromstring(ET.tostring(s))
        except ET.ParseError as e:
            errs.append("svg does not parse: %s" % e)
        if len(list(s.iter())) < 20:
            errs.append("svg nearly empty")
    for want in series:
        if want not in text:
            errs.append("lacks " + want)
    return "; ".join(errs) if errs else "ok"


def check_json(path):
    d = json.load(open(path))
    errs = []
    for k in ("kernel", "levels", "per_ref", "phases", "heatmap", "roofline", "tuning", "tiles", "seconds"):
        if k not in d:
            errs.append("no " + k)
    for l, lv in enumerate(d.get("levels", [])):
        s = sum(r["misses"][l] for r in d["per_ref"])
        if s != lv["misses"]:
            errs.append("per_ref rows add up to %d at L%d, not %d" % (s, l + 1, lv["misses"]))
    for ph in d.get("phases", []):
        if not any(p["model"] for p in ph["points"]):
            errs.append("phase %s has no model point" % ph["param"])
    return "; ".join(errs) if errs else "ok"


def split(path, outdir):
    text = open(path, encoding="utf-8").read()
    style = re.search(r"<style>.*?</style>", text, re.S).group(0)
    n = 0
    for m in re.finditer(r'<figure class="plot" id="(plot-[^"]+)">(.*?)</figure>', text, re.S):
        page = ('<!DOCTYPE html>\n<html><head><meta charset="utf-8"/>%s</head>'
                '<body style="margin:0;background:#fff">%s</body></html>\n' % (style.replace("body{", "x{"), m.group(2)))
        open("%s/%s.html" % (outdir, m.group(1)), "w", encoding="utf-8").write(page)
        print(m.group(1))
        n += 1
    return n


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("unsupported PNG (depth %d, type %d)" % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        cur = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = cur[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                cur[i] = (cur[i] + a) & 255
            elif f == 2:
                cur[i] = (cur[i] + b) & 255
            elif f == 3:
                cur[i] = (cur[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(cur)
        prev = cur
    return w, h, bpp, rows


def pixels(path, x0, y0, x1, y1, min_ink, min_color):
    w, h, bpp, rows = read_png(path)
    ink = color = 0
    for y in range(max(0, y0), min(h, y1)):
        row = rows[y]
        for x in range(max(0, x0), min(w, x1)):
            r, g, b = row[x * bpp], row[x * bpp + 1], row[x * bpp + 2]
            if min(r, g, b) < 235:
                ink += 1
            if max(r, g, b) - min(r, g, b) > 60:
                color += 1
    if ink < min_ink or color < min_color:
        return "blank: %d ink and %d coloured pixels in (%d,%d)-(%d,%d) of %dx%d" % (ink, color, x0, y0, x1, y1, w, h)
    return "ok"


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "html":
        print(check_html(sys.argv[2], sys.argv[3:]))
    elif cmd == "json":
        print(check_json(sys.argv[2]))
    elif cmd == "split":
        split(sys.argv[2], sys.argv[3])
    elif cmd == "pixels":
        print(pixels(sys.argv[2], *[int(v) for v in sys.argv[3:9]]))

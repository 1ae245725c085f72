#!/usr/bin/env python3
"""ansi2html.py IN OUT - turns a terminal capture with colours
(`tmux capture-pane -e -p`) into one self-contained HTML page in a monospace
font, so headless Chromium can render it to a PNG for the docs.  Handles
the SGR codes curses emits: reset, bold, reverse, the 16 colours, 256-colour
and RGB foreground/background."""
import html, re, sys

BASE = ["#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
        "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff"]


def c256(n):
    if n < 16:
        return BASE[n]
    if n < 232:
        n -= 16
        lv = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (lv[n // 36], lv[n // 6 % 6], lv[n % 6])
    g = 8 + (n - 232) * 10
    return "#%02x%02x%02x" % (g, g, g)


def apply(codes, st):
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            st.update(fg=None, bg=None, bold=False, rev=False)
        elif c == 1:
            st["bold"] = True
        elif c == 22:
            st["bold"] = False
        elif c == 7:
            st["rev"] = True
        elif c == 27:
            st["rev"] = False
        elif 30 <= c <= 37:
            st["fg"] = BASE[c - 30]
        elif 90 <= c <= 97:
            st["fg"] = BASE[c - 90 + 8]
        elif c == 39:
            st["fg"] = None
        elif 40 <= c <= 47:
            st["bg"] = BASE[c - 40]
        elif 100 <= c <= 107:
            st["bg"] = BASE[c - 100 + 8]
        elif c == 49:
            st["bg"] = None
        elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
            st["fg" if c == 38 else "bg"] = c256(codes[i + 2])
            i += 2
        elif c in (38, 48) and i + 4 < len(codes) and codes[i + 1] == 2:
            st["fg" if c == 38 else "bg"] = "#%02x%02x%02x" % tuple(codes[i + 2:i + 5])
            i += 4
        i += 1


def main():
    text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
    st = dict(fg=None, bg=None, bold=False, rev=False)
    out = []
    for part in re.split(r"(\x1b\[[0-9;]*m)", text):
        m = re.match(r"\x1b\[([0-9;]*)m", part)
        if m:
            apply([int(x) for x in m.group(1).split(";") if x] or [0], st)
            continue
        if not part:
            continue
        fg, bg = st["fg"] or "#1e1e1e", st["bg"]
        if st["rev"]:
            fg, bg = bg or "#fdfdfd", fg
        style = "color:%s;%s%s" % (fg, "background:%s;" % bg if bg else "", "font-weight:bold;" if st["bold"] else "")
        out.append('<span style="%s">%s</span>' % (style, html.escape(part)))
    page = ("<!doctype html><meta charset=utf-8><title>kbench-tui</title><style>body{margin:0;background:#fdfdfd}"
            "pre{margin:12px;font:13px/1.25 'DejaVu Sans Mono',monospace;color:#1e1e1e}</style><pre>%s</pre>" % "".join(out))
    open(sys.argv[2], "w", encoding="utf-8").write(page)


main()

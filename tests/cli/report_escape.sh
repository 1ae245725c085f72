#!/bin/sh
# report_escape.sh - hostile text in a session (issue 18) renders as text in
# `kbench report`: a kernel comment holding `</script><script>alert(1)</script>`
# and an `<img onerror>` (the winning diff shows it), a compiler log and a
# label, a `kbench note` and the LLM's proposal, reason, model name and error
# message in the journal each carry markup.  The HTML page is loaded in
# headless Chromium: no injected script ran (each would write a marker
# that is in no file, "PWN"+"ED"), and the texts are in the page as text.
# A control page with the same script unescaped shows the marker, so the
# check can see a script that ran.
. tests/cli/lib.sh
S="$T_TMP/hostile"
cp -R sessions/rmsnorm "$S"
# every payload sets document.title and adds the marker to the page
js() { echo "document.title='PWN'+'ED-$1';document.documentElement.append('PWN'+'ED-$1')"; }
python3 - "$S" "$(js src)" "$(js img)" "$(js log)" "$(js llm)" <<'EOF'
import json, sys
d, src, img, log, llm = sys.argv[1:]
# the kernel source: a comment the best variant (v2) added, so in the diff
p = d + '/rmsnorm.cu/v2.cu'
text = open(p).read()
open(p, 'w').write(text.replace('\n', '\n// </script><script>alert(1)</script><script>%s</script> '
                                '<img src=x onerror="%s">\n' % (src, img), 1))
m = json.load(open(d + '/manifest.json'))
vs = m['files'][0]['variants']
# v3: a compile error whose compiler log is markup
v3 = dict(vs[1], name='v3',
          source='rmsnorm.cu/v3.cu', result='rmsnorm.cu/v3.json', verdict='COMPILE ERROR',
          message='rmsnorm.cu v3: COMPILE ERROR\n', time=vs[1]['time'] + 1)
vs.append(v3)
m['order'].insert(2, ['rmsnorm.cu', 'v3'])
json.dump(m, open(d + '/manifest.json', 'w'), indent=1)
open(d + '/rmsnorm.cu/v3.cu', 'w').write(text + '\n#error "</pre><script>%s</script>"\n' % log)
note = json.load(open(d + '/rmsnorm.cu/v1.json'))
# a label (the variant tables), and a `kbench note` of the best (its remark)
note['label'] = '<img src=x onerror="%s">' % img
json.dump(note, open(d + '/rmsnorm.cu/v1.json', 'w'))
best = json.load(open(d + '/rmsnorm.cu/v2.json'))
best['notes'] = ['<svg onload="%s"></svg>' % img]
json.dump(best, open(d + '/rmsnorm.cu/v2.json', 'w'))
json.dump({'compile': {'ok': False, 'status': 'compile_error'},
           'label': '</td></tr></table><script>%s</script>' % log,
           'result': {'type': 'result', 'status': 'compile_error', 'file': 'rmsnorm.cu',
                      'message': 'rmsnorm.cu(42): error: </pre></div><script>%s</script>\n'
                                 '<iframe src="javascript:%s"></iframe>' % (log, log)}},
          open(d + '/rmsnorm.cu/v3.json', 'w'))
# the LLM's text in the journal: a model, a proposal, a reason, an error
ev = [{'event': 'optimize', 'file': 'rmsnorm.cu', 'model': '<script>%s</script>' % llm, 'rounds': 2},
      {'event': 'llm_round', 'file': 'rmsnorm.cu', 'round': 1, 'verdict': 'CORRECT',
       'parent': 'v1', 'variant': 'v2', 'best': True, 'delta_pct': -45.6,
       'proposal': '</script><script>alert(1)</script><b onmouseover="%s">keep</b>' % llm,
       'reason': '<style>body{display:none}</style><script>%s</script>' % llm},
      {'event': 'llm_error', 'file': 'rmsnorm.cu', 'round': 2, 'kind': 'http',
       'message': '<img src=x onerror="%s">' % llm}]
with open(d + '/journal.jsonl', 'a') as f:
    for i, e in enumerate(ev):
        f.write(json.dumps(dict(e, t=1795597600 + i)) + '\n')
EOF
run "$KB" report "$S" --file rmsnorm.cu -o "$T_TMP/r.html"; expect_rc report_html 0
run "$KB" report "$S" --file rmsnorm.cu -o "$T_TMP/r.md";   expect_rc report_md 0
cp "$T_TMP/r.html" "$T_TMP/out"
# the page itself: no element the payloads would make, the texts escaped
expect_not_in html_no_script out "<script"
expect_not_in html_no_img out "<img"
expect_not_in html_no_svg_onload out "<svg onload"
expect_not_in html_no_iframe out "<iframe"
expect_not_in html_no_style out "<style>body"
expect_in html_src_text out "// &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
expect_in html_img_text out "&lt;img src=x onerror=&quot;document.title="
expect_in html_log_text out "rmsnorm.cu(42): error: &lt;/pre&gt;&lt;/div&gt;&lt;script&gt;"
expect_in html_note_text out "&lt;svg onload=&quot;document.title="
expect_in html_label_text out "&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;"
expect_in html_llm_proposal out "&lt;b onmouseover=&quot;"
expect_in html_llm_reason out "&lt;style&gt;body{display:none}&lt;/style&gt;"
expect_in html_llm_model out "&lt;script&gt;document.title="
expect_in html_llm_error out "&lt;img src=x onerror="
# Markdown: GitHub renders inline HTML outside code blocks, so none there
cp "$T_TMP/r.md" "$T_TMP/out"
expect_not_in md_no_img_tag out "| <img"
expect_in md_label_text out "&lt;img src=x onerror="
expect_in md_note_text out "&lt;svg onload="
expect_in md_llm_text out "&lt;script&gt;document.title="

chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -z "$chromium" ]; then
	for c in js_runs dom_loaded no_script_ran text_shown screenshot; do skip $c "no chromium"; done
	finish; exit
fi
# dom FILE OUT: the page's DOM after load (scripts run), then its screenshot
dom() {
	timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run \
		--user-data-dir="$T_TMP/profile" --virtual-time-budget=2000 --dump-dom "file://$1" \
		>"$2" 2>"$T_TMP/chromium.err"
}
printf '<html><head><title>control</title></head><body><p>x</p><script>%s</script></body></html>\n' \
	"$(js control)" >"$T_TMP/control.html"
dom "$T_TMP/control.html" "$T_TMP/out"
expect_in js_runs out "PWNED-control"
dom "$T_TMP/r.html" "$T_TMP/out"
expect_in dom_loaded out "<title>kbench report: rmsnorm_f32"
expect_not_in no_script_ran out "PWNED"
expect_in text_shown out "// &lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
shot=${KBENCH_REPORT_SHOT:-$T_TMP/shot.png}
timeout 90 "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-component-update --disable-sync --no-first-run --user-data-dir="$T_TMP/profile" \
	--hide-scrollbars --window-size=1280,2400 --screenshot="$shot" "file://$T_TMP/r.html" \
	>/dev/null 2>&1
[ "$(wc -c <"$shot" 2>/dev/null || echo 0)" -gt 20000 ] && pass screenshot \
	|| fail screenshot "no screenshot of the page at $shot"
finish

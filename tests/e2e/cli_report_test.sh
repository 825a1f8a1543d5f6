#!/usr/bin/env bash
# quantscope-cli report: the review page of the trained demo model calibrated on its labelled test
# split (accuracy, cosine, scales, SQNR), of a setup file, of a session with HAWQ and weight
# compression sections, and of a zoo model (when QS_ZOO_DIR has one); the page is self-contained,
# well-formed (xmllint as XML, and as HTML where only libxml2's HTML4 parser's "Tag svg invalid"
# complaints about inline SVG are allowed), its quantizer table has the rows of quantizers.csv;
# `diff` of two setups names the changed points; `diff` of the model and its QDQ, int8
# weight-compressed, FP16 and pruned exports recovers each one's quantizers, float16 weights and
# pruned channels and compares every tensor on the test split; a missing --out is a usage error (2), an unwritable path and --setup with --session clear errors.
set -uo pipefail
cli=$1 models=$2
demo=$models/digits_cnn.onnx
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
unset DISPLAY WAYLAND_DISPLAY QT_QPA_PLATFORM
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
py=/usr/bin/python3

# The page's checks: no external reference, well-formed, the table rows are the CSV's.
check_page() { # page.html [csv dir]
    local page=$1 csv=${2:-}
    [ -s "$page" ] || { fail "$page was not written"; return; }
    grep -Eq '(src|href)="(https?:|//)|<link |@import|url\(http' "$page" &&
        fail "$page refers to something outside itself"
    grep -q '<svg' "$page" || fail "$page has no inline SVG"
    if command -v xmllint >/dev/null; then
        xmllint --noout "$page" 2>"$tmp/xml.err" || fail "$page is not well-formed XML: $(head -3 "$tmp/xml.err")"
        xmllint --html --noout "$page" 2>"$tmp/html.err"
        # libxml2's HTML parser knows HTML4 only: inline SVG elements are "invalid tags" to it.
        if grep 'HTML parser error' "$tmp/html.err" | grep -Ev 'Tag [a-zA-Z]+ invalid' | grep -q .; then
            fail "xmllint --html: $(grep 'HTML parser error' "$tmp/html.err" | grep -Ev 'Tag [a-zA-Z]+ invalid' | head -3)"
        fi
    else
        echo "xmllint not installed: skipping the well-formedness checks"
    fi
    if [ -n "$csv" ]; then
        "$py" - "$page" "$csv" <<'EOF' || fail "$page: HTML tables differ from the CSV files"
import csv, html.parser, os, sys
page, folder = sys.argv[1], sys.argv[2]
class Tables(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.tables = {}; self.current = None; self.row = None; self.cell = None
    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("id", "").startswith("table-"):
            self.current = attrs["id"][6:]; self.tables[self.current] = []
        elif tag == "tr" and self.current is not None: self.row = []
        elif tag in ("td", "th") and self.row is not None: self.cell = ""
    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None: self.row.append(self.cell); self.cell = None
        elif tag == "tr" and self.row is not None: self.tables[self.current].append(self.row); self.row = None
        elif tag == "table": self.current = None
    def handle_data(self, data):
        if self.cell is not None: self.cell += data
parser = Tables(); parser.feed(open(page, encoding="utf-8").read())
files = sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".csv"))
if sorted(parser.tables) != files:
    sys.exit(f"tables {sorted(parser.tables)} vs CSV files {files}")
for name in files:
    rows = list(csv.reader(open(os.path.join(folder, name + ".csv"), newline="", encoding="utf-8")))
    if rows != parser.tables[name]:
        sys.exit(f"{name}: {len(parser.tables[name])} HTML rows vs {len(rows)} CSV rows")
EOF
    fi
}

# The demo model calibrated on its labelled test split.
"$cli" report "$demo" --calib-npy "$models/digits_test_inputs.npy" \
    --labels-npy "$models/digits_test_labels.npy" --out "$tmp/demo.html" --csv "$tmp/csv" \
    >"$tmp/out" 2>"$tmp/err" || fail "report of the demo model exited $?: $(tail -3 "$tmp/err")"
check_page "$tmp/demo.html" "$tmp/csv"
grep -q 'Top-1 accuracy: float' "$tmp/demo.html" || fail "the demo page lacks the accuracy"
grep -q 'cosine 0\.9' "$tmp/demo.html" || fail "the demo page lacks the output cosine"
grep -q 'Statistics of the bitwidth distribution' "$tmp/demo.html" || fail "no NNCF table"
[ -s "$tmp/csv/quantizers.csv" ] || fail "no quantizers.csv"
scales=$("$py" -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(sum(1 for x in r if x["scale"]))' "$tmp/csv/quantizers.csv")
[ "$scales" -gt 0 ] || fail "no quantizer of the calibrated demo has a scale"

# A setup written by quantize, then a session with HAWQ and weight-compression sections.
"$cli" quantize "$demo" --hw npu --set '/fc/Gemm=4' --setup-out "$tmp/setup.json" >/dev/null 2>&1 ||
    fail "quantize --setup-out failed"
"$cli" quantize "$demo" --hw npu --setup-out "$tmp/setup8.json" >/dev/null 2>&1 ||
    fail "quantize --setup-out (8 bits) failed"
"$cli" report "$demo" --setup "$tmp/setup.json" --hw npu --out "$tmp/setup.html" 2>"$tmp/err" ||
    fail "report --setup exited $?: $(tail -3 "$tmp/err")"
check_page "$tmp/setup.html"
grep -q "setup $tmp/setup.json" "$tmp/setup.html" || fail "the setup page does not name its setup"
"$cli" hawq "$demo" --hw npu --compression-ratio 1.4 --calib-random 8 --samples 4 \
    --iterations 20 --setup-out "$tmp/hawq_setup.json" --session "$tmp/s.qscope" >/dev/null 2>&1 ||
    fail "hawq --session failed"
"$cli" compress-weights "$demo" --mode int8_asym --out "$tmp/int8.onnx" \
    --session "$tmp/s.qscope" >/dev/null 2>&1 || fail "compress-weights --session failed"
"$cli" report --session "$tmp/s.qscope" --out "$tmp/session.html" --csv "$tmp/scsv" \
    2>"$tmp/err" || fail "report --session exited $?: $(tail -3 "$tmp/err")"
check_page "$tmp/session.html" "$tmp/scsv"
grep -q 'id="hawq"' "$tmp/session.html" || fail "the session page has no HAWQ section"
grep -q 'id="weight-compression"' "$tmp/session.html" || fail "no weight-compression section"
[ -s "$tmp/scsv/hawq_layers.csv" ] || fail "no hawq_layers.csv"
grep -q 'id="pruning"' "$tmp/session.html" && fail "a pruning section without pruning"

# The diff of two setups: the 4-bit Gemm input is the change.
"$cli" diff "$tmp/setup8.json" "$tmp/setup.json" --model "$demo" --hw npu --out "$tmp/diff.html" \
    --csv "$tmp/dcsv" >"$tmp/out" 2>"$tmp/err" || fail "diff exited $?: $(tail -3 "$tmp/err")"
check_page "$tmp/diff.html" "$tmp/dcsv"
grep -q '/fc/Gemm' "$tmp/dcsv/changed_quantizers.csv" || fail "the diff misses the 4-bit /fc/Gemm"
grep -q 'bit width' "$tmp/dcsv/changed_quantizers.csv" || fail "the diff names no bit-width change"
"$cli" diff "$tmp/setup8.json" "$tmp/setup.json" --out "$tmp/d2.html" 2>/dev/null; rc=$?
[ "$rc" -eq 2 ] || fail "diff of two setups without --model exited $rc, expected 2"

# The model against its exports, compared on 32 test samples.
data=(--calib-npy "$models/digits_test_inputs.npy" --calib-samples 32)
"$cli" quantize "$demo" --hw npu --setup-in "$tmp/setup.json" "${data[@]}" --out "$tmp/qdq.onnx" \
    >/dev/null 2>&1 || fail "quantize --out failed"
# (The demo has Convs only, which NNCF's weight compression keeps in its 8-bit backup mode.)
"$cli" compress-weights "$demo" --mode int8_sym --out "$tmp/int8w.onnx" >/dev/null 2>&1 ||
    fail "compress-weights int8_sym failed"
"$cli" convert-fp16 "$demo" --out "$tmp/fp16.onnx" >/dev/null 2>&1 || fail "convert-fp16 failed"
"$cli" prune "$demo" --target-memory 90% --importance l2 --simd 1 --out "$tmp/pruned.onnx" \
    >/dev/null 2>&1 || fail "prune failed"
for kind in qdq int8w fp16 pruned; do
    "$cli" diff "$demo" "$tmp/$kind.onnx" "${data[@]}" --out "$tmp/x_$kind.html" \
        --csv "$tmp/x_$kind" >"$tmp/out" 2>"$tmp/err" ||
        fail "diff of the $kind export exited $?: $(tail -3 "$tmp/err")"
    check_page "$tmp/x_$kind.html" "$tmp/x_$kind"
    grep -q 'First divergent layer' "$tmp/out" || fail "diff of the $kind export names no divergence"
    [ "$(wc -l <"$tmp/x_$kind/tensor_sqnr.csv")" -gt 20 ] || fail "$kind: few tensors compared"
done
# With labels both models' accuracy comes too, as `evaluate` counts it.
"$cli" diff "$demo" "$tmp/qdq.onnx" "${data[@]}" --labels-npy "$models/digits_test_labels.npy" \
    --out "$tmp/x_acc.html" >"$tmp/out" 2>"$tmp/err" || fail "diff with labels exited $?: $(tail -3 "$tmp/err")"
want=$("$cli" evaluate "$demo" "$tmp/qdq.onnx" "${data[@]}" --labels-npy "$models/digits_test_labels.npy" 2>/dev/null |
    awk '$1 ~ /qdq.onnx$/ {print $2}')
grep -q "Top-1 accuracy: float .*, B ${want%\%} %" "$tmp/out" ||
    fail "diff's accuracy differs from evaluate's ($want): $(grep Top-1 "$tmp/out")"
# A quantized graph output: B renames the Gemm's own output, so its row is the Gemm's, not the
# output quantizer's (the two SQNRs differ).
"$cli" quantize "$demo" --quantize-outputs "${data[@]}" --out "$tmp/qout.onnx" >/dev/null 2>&1 ||
    fail "quantize --quantize-outputs failed"
"$cli" diff "$demo" "$tmp/qout.onnx" "${data[@]}" --out "$tmp/x_qout.html" --csv "$tmp/x_qout" \
    >/dev/null 2>&1 || fail "diff of the output-quantized export failed"
"$py" - "$tmp/x_qout/tensor_sqnr.csv" <<'EOF2' || fail "the Gemm's row of a quantized output is the quantizer's"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["tensor"] == "logits"]
gemm = [r["SQNR dB"] for r in rows if r["producer"] == "/fc/Gemm"]
quantizer = [r["SQNR dB"] for r in rows if r["producer"].startswith("quantizer ")]
if len(gemm) != 1 or len(quantizer) != 1 or gemm == quantizer:
    sys.exit(f"logits rows: Gemm {gemm}, quantizer {quantizer}")
EOF2
# The QDQ export's quantizers are the setup's, the Gemm input among them at 4 bits.
"$py" - "$tmp/setup.json" "$tmp/x_qdq/changed_quantizers.csv" <<'EOF2' || fail "the QDQ export's quantizers are not the setup's"
import csv, json, sys
setup = json.load(open(sys.argv[1]))
want = set()
for qp in setup["quantization_points"].values():
    ip = qp["qip"]
    if "Weight" in qp["qip_class"]: want.add(ip["target_node_name"] + "[W]")
    elif ip.get("input_port_id") is not None: want.add(f'{ip["target_node_name"]}:{ip["input_port_id"]}')
    else: want.add(ip["target_node_name"])
rows = list(csv.DictReader(open(sys.argv[2])))
got = {r["insertion point"] for r in rows}
if got != want: sys.exit(f"missing {want - got}, extra {got - want}")
if not any(r["insertion point"].startswith("/fc/Gemm") and r["bits B"] == "4" for r in rows):
    sys.exit("no 4-bit /fc/Gemm quantizer")
EOF2
weights=$(grep -c ',weight,.*,8,' "$tmp/x_int8w/changed_quantizers.csv")
[ "$weights" -eq 14 ] || fail "the weight-compressed export shows $weights 8-bit weights, not 14"
grep -q 'Float16 initializers in B' "$tmp/x_fp16.html" || fail "the FP16 export's weights are not counted"
[ "$(wc -l <"$tmp/x_pruned/pruned_channels.csv")" -gt 1 ] || fail "the pruned export shows no pruned weight"
"$cli" diff "$demo" "$tmp/setup.json" --out "$tmp/x.html" 2>/dev/null; rc=$?
[ "$rc" -eq 2 ] || fail "diff of a model and a setup exited $rc, expected 2"

# Errors: usage (2) and bad input (1), one line each, nothing written.
"$cli" report "$demo" 2>/dev/null; rc=$?
[ "$rc" -eq 2 ] || fail "report without --out exited $rc, expected 2"
"$cli" report "$demo" --setup "$tmp/setup.json" --session "$tmp/s.qscope" --out "$tmp/x.html" \
    2>/dev/null; rc=$?
[ "$rc" -eq 2 ] || fail "--setup with --session exited $rc, expected 2"
"$cli" report "$demo" --out "$tmp/missing/dir/r.html" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] || fail "an unwritable --out exited $rc, expected 1"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "unwritable --out error is not one line: $(cat "$tmp/err")"
grep -q "$tmp/missing/dir/r.html" "$tmp/err" || fail "the error does not name the path: $(cat "$tmp/err")"
"$cli" report "$tmp/missing.onnx" --out "$tmp/y.html" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] || fail "a missing model exited $rc, expected 1"
if [ -e "$tmp/x.html" ] || [ -e "$tmp/y.html" ]; then fail "a page was written for a failed report"; fi

# A zoo model, when the zoo is there.
zoo=${QS_ZOO_DIR:-}
if [ -n "$zoo" ] && [ -f "$zoo/resnet18.onnx" ]; then
    "$cli" report "$zoo/resnet18.onnx" --out "$tmp/resnet18.html" --csv "$tmp/rcsv" 2>"$tmp/err" ||
        fail "report of resnet18 exited $?: $(tail -3 "$tmp/err")"
    check_page "$tmp/resnet18.html" "$tmp/rcsv"
else
    echo "QS_ZOO_DIR has no resnet18.onnx: skipping the zoo model"
fi

[ "$failures" -eq 0 ] && echo "cli report: all checks passed"
exit "$failures"

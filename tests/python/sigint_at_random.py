# Trains the small copy task N times, each run sent a SIGINT (process-directed, as a terminal's
# Ctrl-C) after a random delay of up to MAX_DELAY seconds, so that over the runs the signal
# lands everywhere: before the call, while the data loads, in GEMMs, in callbacks, after the run.
# Prints one JSON line per run: how it ended and the run directory's files. Exits non-zero if a
# run ended any other way than the documented ones; an abort kills the process (the caller sees
# the signal). Usage: python sigint_at_random.py RUNS MAX_DELAY STEPS OUT_DIR [SEED]
import json
import os
import random
import signal
import sys
import threading

import scalelab

SMALL_COPY = {"model.d_model": 32, "train.threads": 1, "data.train_size": 200, "data.valid_size": 20,
              "train.eval_examples": 0, "train.log_every": 1, "train.lr": 1e-4}


def main() -> int:
    runs, max_delay, steps, out = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else None)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    source = os.environ["SCALELAB_SOURCE"]
    bad = 0
    for i in range(runs):
        cfg = scalelab.Config(os.path.join(source, "configs", "copy.toml"), set=SMALL_COPY)
        run_dir = os.path.join(out, f"r{i}")
        timer = threading.Timer(rng.uniform(0, max_delay), os.kill, (os.getpid(), signal.SIGINT))
        ended = "returned"
        try:
            timer.start()
            try:
                scalelab.train(cfg, steps=steps, run_dir=run_dir)
            except KeyboardInterrupt as e:
                ended = "interrupted" if hasattr(e, "history") else "interrupted-outside-train"
            timer.join()
        except KeyboardInterrupt:  # arrived in this script's own code, outside train()
            timer.join()
            ended = "interrupted-outside-train"
        files = sorted(os.listdir(run_dir)) if os.path.isdir(run_dir) else []
        checkpoint_step = scalelab.Model.load(os.path.join(run_dir, "checkpoint.safetensors")).step if files else None
        # The documented endings: nothing written; or a checkpoint that loads, with the run's
        # records up to its step; summary.json only for a complete run.
        ok = (not files) or ("checkpoint.safetensors" in files and checkpoint_step >= 1
                             and ("summary.json" in files) == (checkpoint_step == steps))
        if ended == "returned":
            ok = ok and "summary.json" in files
        bad += not ok
        print(json.dumps({"run": i, "ended": ended, "files": files, "checkpoint_step": checkpoint_step, "ok": ok}),
              flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

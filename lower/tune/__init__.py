"""Schedule autotuning: the recipes' decisions searched per kernel, measured, learned from, and kept.

* ``records`` — the tuning records (the decisions measured fastest per kernel and target), which
  ``compile`` reads through ``lower.schedule.cache``;
* ``space`` — a kernel's search space, read from its recipe's decisions (``Schedule.decide``), and the
  candidates drawn from it, each checked by the schedule's own steps before it is built;
* ``harness`` — one kernel compiled alone with a candidate schedule, timed, and its output compared with
  the default schedule's;
* ``features`` and ``model`` — features of a scheduled kernel's loop IR, and the gradient-boosted-tree cost
  model (LightGBM) trained on the measurements as they arrive;
* ``runners`` — where candidates are measured: this process, or the workers of a Ray cluster;
* ``search`` — the tuner: per kernel, evolutionary search ranked by the model, in measured batches.

Nothing is imported here: ``lower.schedule.cache`` reads ``records`` without the rest.
"""

"""The benchmark harness: what every study script of ``benchmarks/`` shares.

- :mod:`harness.data`: the data registry (every data set the studies use, one loader each, with
  its source and licence; data outside the repository is looked up under ``../shared/data``
  next to the checkout or ``--data-dir``, and a study skips what is missing with a message);
- :mod:`harness.competitors`: one adapter per library (skdp, scikit-learn, Opacus,
  diffprivlib) that fits and scores, so that a study runs them side by side in one process;
- :mod:`harness.comparison`: the side-by-side driver of the linear models against all three;
- :mod:`harness.tables`: markdown tables and the number formats of the cells;
- :mod:`harness.machine`: the machine header (CPU, cores, torch threads, library versions,
  date, skdp's commit) recorded in every results file;
- :mod:`harness.results`: a study run, its tables and its results file
  ``benchmarks/results/<study>.json``, read by ``benchmarks/make_pages.py``;
- :mod:`harness.cli`: the command-line options every script shares (``--threads``,
  ``--data-dir``, ``--results``);
- :mod:`harness.timing`: wall times, per-epoch costs and peak memory;
- :mod:`harness.internals`: the only module that imports skdp's private names (a rename inside
  skdp is one edit there);
- :mod:`harness.threads`: ``--threads`` applied before numpy and torch load.

This ``__init__`` imports nothing, so that ``from harness.threads import pin_threads`` can run
before numpy is imported.
"""

"""The memory-aware reward model of seed 003 (see ``docs/reward.md``).

Modules: :mod:`~mirage_bench.reward.data` (records, JSONL), :mod:`~mirage_bench.reward.dataset_pairs`
(the dataset builder's ``preference_pairs`` as input), :mod:`~mirage_bench.reward.retrieval` (embeddings
through :mod:`mirage_bench.embeddings`) and
:mod:`~mirage_bench.reward.pairs` (pair construction), :mod:`~mirage_bench.reward.rubric` and
:mod:`~mirage_bench.reward.features` (rubric induction and features), :mod:`~mirage_bench.reward.model`
(grouped cross-validation), :mod:`~mirage_bench.reward.artifact` (saved models),
:mod:`~mirage_bench.reward.baselines` and :mod:`~mirage_bench.reward.hf_rm` (baselines),
:mod:`~mirage_bench.reward.evaluation` (Table 3 / Table 5), :mod:`~mirage_bench.reward.synthetic`
(SYNTHETIC test fixtures and a scripted responder — never data).
"""

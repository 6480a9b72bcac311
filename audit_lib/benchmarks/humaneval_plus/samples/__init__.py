"""A user's own samples scored with the official harness's semantics (`your_samples`): files, scoring, figures.

`sample_files` reads the samples, `official_results` the harness's own verdicts on them, `evalplus_scoring` and
`humaneval_scoring` replay the two harnesses in the sandbox, `estimates` turns verdicts into pass@k with a paired
bootstrap, `agreement` compares verdicts with the official ones, `failure_kinds` says why samples fail, and `check`
builds the `your_samples` check. Nothing here imports numpy, pandas or the sandbox at module level except the
scoring modules.
"""

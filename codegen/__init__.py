"""The npudsl source transformer, a folder per stage (docs/architecture.md).

driver/ reads a run and hands each file to: frontend/ (collect) -> check/ (validate) -> lower/ (plan) ->
rewrite/ (splice), spelled by targets/; index/ is what every file of a run says about the others.
"""

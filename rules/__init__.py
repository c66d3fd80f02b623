"""The rule catalogue: vocabulary and consumer data (YAML) and the rule classes.

Lives at the repository's top level as ``rules/`` and ships as ``auditor.rules``.
"""

"""Code that runs inside the user's processes: the report channel, the timer, the hook.

Everything under this package imports the standard library only (a test checks it), so
that loading it into a worker never drags the probe's dependencies (rich, PyYAML, psutil)
into the user's process. Users import it by its public names, ``auditor.report`` and
``auditor.timing``, which are aliases of the modules here.
"""

"""The project's test-session set-up is ``tests/conftest.py``; nothing is set up here.

pytest loads the ``conftest.py`` of every folder above a path it collects.  The pytest
plugin collects its suite from inside the installed package, so in a clone installed with
``pip install -e`` this file is loaded into the session of anyone who runs ``pytest
--scan-target`` from another folder: kept empty, it changes nothing there (no Hypothesis
profile, no environment, no hooks), while ``tests/conftest.py`` is loaded only for the
project's own tests.
"""

"""The skeleton of a new agent repository (package data, no code; this file is not copied).

Read with importlib.resources.files("evolve.template_workspace").
"""

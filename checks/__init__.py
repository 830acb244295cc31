"""The checks: one module per theme, several small checks each.

Every module here is imported by `doctor.registry.discover()`; a module that
fails to import is a loud error, never a silently missing check.
"""

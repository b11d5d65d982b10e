"""The conformance harness: deltavacuum against Spark's VACUUM (Delta Lake) and delta-rs.

Modules:
  fs       copying, aging and listing table folders
  engines  the three engines behind one small interface each (Spark, deltavacuum, delta-rs)
  tables   the tables the real engines write, created fresh by every run
  compare  what counts as a difference, and which differences the contract allows
  report   the record of every difference seen, printed at the end of the run
"""

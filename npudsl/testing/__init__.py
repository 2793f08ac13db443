"""Helpers for running generated code where the device is missing."""

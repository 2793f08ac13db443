"""The npudsl source transformer: collect -> validate -> lower -> rewrite."""

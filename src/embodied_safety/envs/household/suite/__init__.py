"""The project's own household task suite: templates, instances, splits and OOD splits."""

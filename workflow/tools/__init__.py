"""The project's maintenance commands (python -m workflow.tools.<name>): what a maintainer runs, never a job."""

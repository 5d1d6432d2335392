"""Particle preprocessing on Warp. The package re-exports its pipeline, as real packages do."""
from particle_prep.pipeline import Pipeline
from particle_prep.stages import make_stage

__all__ = ["Pipeline", "make_stage"]

"""python -m particle_prep: one pass of the pipeline over a particle cloud."""
from particle_prep import Pipeline
from particle_prep.plugins import Plugin


def main():
    pipeline = Pipeline(1024, plugins=[Plugin("bias", 0.5)])
    pipeline.run()
    print("measure", round(pipeline.measure(), 3))


if __name__ == "__main__":
    main()

"""python -m particle_prep: one pass of the pipeline over a particle cloud."""
from particle_prep import Pipeline


def main():
    Pipeline(1024).run()


if __name__ == "__main__":
    main()

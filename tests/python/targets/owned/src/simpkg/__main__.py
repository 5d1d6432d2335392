from simpkg.kern import run

run()

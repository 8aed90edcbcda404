"""The first code cell shared by every notebook (imports, ``N_DRAWS``, ``SEED``);
see ``build.py``."""

SETUP = """\
import os
import warnings

import arviz as az
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import bayesgen as bg

%matplotlib inline
N_DRAWS = int(os.environ.get("BAYESGEN_NB_DRAWS", "1000"))  # CI sets it small
N_TUNE = int(os.environ.get("BAYESGEN_NB_TUNE", str(N_DRAWS)))
SEED = 0
pd.set_option("display.precision", 3)
warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm in nbclient
warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
print(f"bayesgen {bg.__version__}, draws = {N_DRAWS}, tune = {N_TUNE}")"""

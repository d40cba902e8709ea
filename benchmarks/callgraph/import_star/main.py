from util import *

def run():
    tool()

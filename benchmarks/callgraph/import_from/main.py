from util import tool

def run():
    tool()

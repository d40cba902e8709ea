import util

def run():
    util.tool()

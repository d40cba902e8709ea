def run():
    from util import tool
    tool()

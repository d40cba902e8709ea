class Wheel:
    def spin(self):
        return 1

class Axle:
    def __init__(self):
        self.wheel = Wheel()

class Car:
    def __init__(self):
        self.axle = Axle()

    def go(self):
        return self.axle.wheel.spin()

def device_agnostic_run():
    pass

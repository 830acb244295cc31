import args

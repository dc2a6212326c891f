"""punctum.train"""

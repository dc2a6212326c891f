"""punctum.audio"""

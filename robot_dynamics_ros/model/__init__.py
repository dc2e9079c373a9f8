from .model import PRISMATIC, REVOLUTE, Frame, Model
from .urdf import URDFError, load_urdf, parse_urdf

__all__ = ['Model', 'Frame', 'REVOLUTE', 'PRISMATIC', 'URDFError', 'load_urdf', 'parse_urdf']

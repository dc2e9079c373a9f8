from .configuration import difference, integrate, neutral, normalize, random_configuration
from .model import FREE_FLYER, PLANAR, PRISMATIC, REVOLUTE, Frame, Model
from .urdf import URDFError, load_urdf, parse_urdf

__all__ = ['Model', 'Frame', 'REVOLUTE', 'PRISMATIC', 'FREE_FLYER', 'PLANAR', 'URDFError', 'load_urdf', 'parse_urdf',
           'integrate', 'difference', 'neutral', 'random_configuration', 'normalize']

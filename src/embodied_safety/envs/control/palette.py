"""Colours the control environments render with (RGB, uint8), shared by the renderers and the pixel rubric
scorer (``embodied_safety.shield``), which reads only rendered frames, never simulator state.

Training frames use these colours; the +Color perturbation (§5.5) swaps obstacle colours for
:data:`HELD_OUT_OBSTACLE` hues the scorer and the policy never saw, and +Light dims and warms the frame.
"""

from __future__ import annotations

RGB = tuple[int, int, int]

# Dubins-VL, top-down 84x84 over the [-1, 1]^2 workspace
DUBINS_BACKGROUND: RGB = (235, 235, 235)
DUBINS_OBSTACLE: RGB = (200, 40, 40)  # disc of radius r_obs = 0.25
DUBINS_CLEARANCE: RGB = (0, 0, 0)  # not drawn: the d_safe ring is invisible, the scorer must infer it
DUBINS_GOAL: RGB = (40, 170, 60)
DUBINS_AGENT: RGB = (30, 90, 220)  # the car, with a heading tick

# TurtleBot-Nav, egocentric 96x96
TURTLEBOT_FLOOR: RGB = (150, 150, 150)
TURTLEBOT_WALL: RGB = (210, 200, 185)
TURTLEBOT_OBSTACLE: RGB = (60, 70, 160)  # the r = 0.6 m cylinder (blue-grey: distinct from both goal balls)
TURTLEBOT_RED_BALL: RGB = (220, 30, 30)
TURTLEBOT_YELLOW_BALL: RGB = (230, 200, 20)
TURTLEBOT_SKY: RGB = (40, 40, 50)

# Franka-Reach, front 96x96
FRANKA_TABLE: RGB = (170, 140, 100)
FRANKA_OBSTACLE: RGB = (200, 40, 40)  # the r = 8 cm cylinder
FRANKA_TARGET: RGB = (40, 170, 60)
FRANKA_ARM: RGB = (220, 220, 225)
FRANKA_BACKGROUND: RGB = (60, 60, 70)

# +Color: obstacle hues held out from training (purple, orange, cyan)
HELD_OUT_OBSTACLE: tuple[RGB, ...] = ((140, 60, 200), (240, 140, 30), (30, 190, 200))
# +Light: per-channel gain (dim and warm)
LIGHT_GAIN: tuple[float, float, float] = (0.75, 0.6, 0.45)

# PyScript entry of index.html: all logic lives in streampace.browser.demo.
from pyscript.js_modules import streampace_bridge, streampace_demo
from streampace.browser.demo import main

demo = main(streampace_bridge, streampace_demo)
